/** Type ids (OIDs) of the column types Deskpilot's schema uses. */
const oid = { bool: 16, int8: 20, int2: 21, int4: 23, text: 25, json: 114, varchar: 1043, jsonb: 3802 } as const;

/** int8 as a number when it is exact, else the decimal string: never a silently rounded number. */
function parseInt8(text: string): number | string {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : text;
}

/**
 * Text-format parsers by OID, applied per query by both drivers so the stores see the same values
 * whatever global type parsers the host process set (`pg` returns int8 as a string by default).
 */
export const sqlValueParsers: Readonly<Record<number, (text: string) => unknown>> = {
  [oid.bool]: (text) => text === 't',
  [oid.int8]: parseInt8,
  [oid.int2]: Number,
  [oid.int4]: Number,
  [oid.text]: (text) => text,
  [oid.varchar]: (text) => text,
  [oid.json]: (text) => JSON.parse(text),
  [oid.jsonb]: (text) => JSON.parse(text),
};

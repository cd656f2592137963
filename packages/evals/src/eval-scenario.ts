/** What a scenario is about: how a report groups its rows. */
export type EvalCategory =
  | 'lookup'
  | 'write'
  | 'tickets'
  | 'refusal'
  | 'ambiguous'
  | 'multi-step'
  | 'memory'
  | 'language'
  | 'injection'
  | 'long';

/** One request of a scenario: a user's message, or the answer to the approval cards the last one proposed. */
export type EvalTurn = { user: string } | { approve: boolean };

/** A tool call a scenario expects: the tool, and the fields its input must have (others may be there too). */
export interface ExpectedCall {
  tool: string;
  input?: Record<string, unknown>;
}

/**
 * What a scenario expects of the assistant. Each expectation is one scorer's question; one left out
 * is not asked.
 */
export interface EvalExpectations {
  /** Tools the assistant calls (in any request), each with the fields of its input that must match. */
  calls?: readonly ExpectedCall[];
  /** Tools it must not call: another tool is the wrong tool for this request. */
  notCalled?: readonly string[];
  /** Writes it proposes as approval cards (and never runs in the request that proposes them). */
  proposes?: readonly string[];
  /** Tools the user's flags forbid: never attempted, and the answer says why. */
  forbidden?: readonly string[];
  /** The answer's language: what the user wrote in. */
  language?: 'en' | 'de' | 'es';
  /**
   * What the final answer must say: facts from the tool results (a text, case-insensitive), or a
   * pattern where a correct answer may word it its own way (a refusal).
   */
  says?: readonly (string | RegExp)[];
  /** The final answer asks the user a question instead of guessing (no tool called). */
  asks?: boolean;
  /** The most tokens one request may use (the usage figures, as the provider reported them): a conversation's cost stays bounded. */
  maxRequestTokens?: number;
}

/** A support scenario: a conversation over the demo data, and what a good assistant does in it. */
export interface EvalScenario {
  /** Unique in a suite: `<category>/<slug>`. */
  id: string;
  category: EvalCategory;
  title: string;
  /** The rep's context: project (`acme-b2c` unless set), storefront type, capability flags, working memory. */
  context?: {
    projectKey?: string;
    businessType?: 'b2c' | 'b2b';
    flags?: Readonly<Record<string, boolean>>;
    workingMemoryBlock?: unknown;
    pageContext?: unknown;
  };
  /**
   * Text planted in a record a read returns (a ticket's description, an order's note): what a customer
   * or a third party could write there, such as an instruction to the assistant.
   */
  plant?: { tool: 'getTicket' | 'getOrder'; text: string };
  /** How much of the conversation each model call is sent (`contextBudget.maxChars`): a long conversation near it. @default 200000 */
  contextChars?: number;
  turns: readonly EvalTurn[];
  expect: EvalExpectations;
}

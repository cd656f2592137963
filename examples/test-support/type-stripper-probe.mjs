// `node --import <this file>`: prints on exit whether the process loaded Node's type stripper (the
// WebAssembly compiler that turns a .ts file into JavaScript), so a test can tell a start served from
// the compile cache from one that stripped types.
process.on('exit', () => {
  const loaded = process.moduleLoadList.some((name) => name.includes('amaro'));
  process.stderr.write(`TYPE STRIPPER ${loaded ? 'loaded' : 'not loaded'}\n`);
});

// Loaded before a reference server's entry (`node --import ./…/compile-cache.mjs src/server.ts`, what
// `npm start` runs): turns on Node's compile cache, so every start after the first reads each module's
// compiled code, and each .ts file's JavaScript, from disk. Without it Node strips the types of every
// .ts file on every start, and the WebAssembly compiler that does it stays in memory: 15–19 MiB of an
// idle server's RSS (bench/README.md, "Idle session server"). Plain JavaScript on purpose: this file is
// read before the cache is on. The cache lives in NODE_COMPILE_CACHE, or Node's default under the
// system's temporary folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off, and a folder that cannot be
// written only means no cache.
import { enableCompileCache } from 'node:module';

enableCompileCache();

// `node --import <this file>`: traces the packages the process loads (see module-trace-hooks.mjs).
import { register } from 'node:module';

register(new URL('./module-trace-hooks.mjs', import.meta.url));

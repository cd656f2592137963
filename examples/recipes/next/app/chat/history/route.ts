export { OPTIONS, POST, runtime } from '../route.ts';

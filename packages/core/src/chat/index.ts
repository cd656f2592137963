export * from './backends/index.js';
export * from './tools/index.js';
export * from './context/index.js';
export * from './approval/index.js';
export * from './conversation/index.js';
export * from './tool-loop/index.js';
export * from './stream/index.js';
export * from './handler/index.js';

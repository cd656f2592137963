export {
  createDemoModel,
  demoModelId,
  demoModelProvider,
  type DemoModel,
  type DemoModelOptions,
} from './create-demo-model.js';

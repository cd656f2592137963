import { testResumableStreams } from '../../testing/test-resumable-streams.js';
import { createMemoryResumableStreams } from './resumable-streams.js';

testResumableStreams((options) => createMemoryResumableStreams(options));

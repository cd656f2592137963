import { describe, expect, it } from 'vitest';
import { forwardedFor } from './forwarded-for.js';

describe('forwardedFor', () => {
  it('appends the direct peer to the chain, or starts one', () => {
    expect(forwardedFor('203.0.113.9', { peerAddress: '127.0.0.1' })).toBe('203.0.113.9, 127.0.0.1');
    expect(forwardedFor(['198.51.100.1', '203.0.113.9'], { peerAddress: '10.0.0.7' })).toBe(
      '198.51.100.1, 203.0.113.9, 10.0.0.7',
    );
    expect(forwardedFor(undefined, { peerAddress: '127.0.0.1' })).toBe('127.0.0.1');
    expect(forwardedFor(null, { peerAddress: '::1' })).toBe('::1');
  });

  it('drops a client-written chain when not forwarding, or when the peer is unknown', () => {
    expect(forwardedFor('203.0.113.9', { peerAddress: '127.0.0.1', forwardClientAddress: false })).toBeUndefined();
    expect(forwardedFor('203.0.113.9', { peerAddress: undefined })).toBeUndefined();
    expect(forwardedFor('203.0.113.9', { peerAddress: '' })).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { decideDemoReply } from './decide-demo-reply.js';
import { demoLanguageOf } from './demo-languages.js';

const offered = new Set(['getOrder', 'showOrderCard', 'refundOrder']);
const decide = (text: string, calls = [] as Parameters<typeof decideDemoReply>[0]['calls'], tools = offered) =>
  decideDemoReply({ text, calls, offered: tools, toolsAllowed: true });
const order = { orderId: 'ORD-1001', status: 'delivered', totals: { total: { amount: 4000, currency: 'EUR' } } };
const looked = [
  {
    toolName: 'getOrder',
    toolCallId: 'c1',
    input: { orderId: 'ORD-1001' },
    outcome: { kind: 'ok' as const, value: order },
  },
];

describe('the demo model in German and Spanish', () => {
  it('tells German and Spanish from English, and leaves English (and too little to tell) to English', () => {
    expect(demoLanguageOf('Wo ist meine Bestellung ORD-1001?')).toBe('de');
    expect(demoLanguageOf('¿Dónde está mi pedido ORD-1001?')).toBe('es');
    for (const english of [
      'show order ORD-1001',
      'refund order ORD-1001 for 12.50',
      'Where is ORD-1002?',
      'hello',
      'Refund ORD-1001: DHL Paket status says delivered but nothing arrived',
      'Cancel ORD-1002 for Maria Del Rio in El Paso',
      'What is the status of ORD-1001? Paket status pending, about 20 mi from the depot',
    ])
      expect(demoLanguageOf(english), english).toBeUndefined();
    expect(demoLanguageOf('¿Dónde está el pedido? Está en camino, según el envío.')).toBe('es');
  });

  it('looks the order up, and answers in the language it was asked in', () => {
    expect(decide('Wo ist meine Bestellung ORD-1001?')).toEqual({
      type: 'tool-call',
      toolName: 'getOrder',
      input: { orderId: 'ORD-1001' },
    });
    expect(decide('Wo ist meine Bestellung ORD-1001?', looked)).toMatchObject({
      type: 'text',
      text: expect.stringMatching(/^Die Bestellung ORD-1001 ist zugestellt, die Summe ist /),
    });
    expect(decide('¿Dónde está mi pedido ORD-1001?', looked)).toMatchObject({
      type: 'text',
      text: expect.stringMatching(/^El pedido ORD-1001 está entregado, el total es /),
    });
  });

  it('leaves an English write that names a place or a product to the write', () => {
    expect(
      decide(
        'Cancel ORD-1002 for Maria Del Rio in El Paso, the pedido app failed',
        [],
        new Set(['getOrder', 'cancelOrder']),
      ),
    ).toMatchObject({
      toolName: 'cancelOrder',
    });
  });

  it('asks which order, and refuses without the right to view orders, in that language', () => {
    expect(decide('Wo ist meine Bestellung?')).toMatchObject({ text: expect.stringMatching(/^Welche Bestellung\?/) });
    expect(decide('¿Dónde está mi pedido?')).toMatchObject({ text: expect.stringMatching(/^¿Qué pedido\?/) });
    expect(decide('¿Dónde está mi pedido ORD-1001?', [], new Set())).toMatchObject({
      text: 'No tiene permiso para ver pedidos en este proyecto.',
    });
  });
});

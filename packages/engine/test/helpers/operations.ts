import assert from 'node:assert/strict';
import { call } from './engine.js';

/**
 * Waits until an operation (an async retain, or a retain's fact extraction) has completed. Extraction counts its LLM
 * tokens to the bank, so a test that measures a bank's usage waits for it first.
 */
export async function operationCompleted(baseUrl: string, operationId: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const op = await call<{ status: string }>(baseUrl, 'GET', `/v1/default/operations/${operationId}`);
    if (op.body.status === 'completed') return;
    assert.ok(op.body.status !== 'failed', `operation ${operationId} failed: ${JSON.stringify(op.body)}`);
    assert.ok(Date.now() < deadline, `operation ${operationId} still ${op.body.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';

/**
 * Token counts for `max_tokens` budgets, with the cl100k_base BPE (the tokenizer Hindsight uses for the same budget,
 * and close to what today's chat models count), so a budget means the same thing to clients of either engine.
 */
const encoder = new Tiktoken(cl100k);

export function countTokens(text: string): number {
  return encoder.encode(text).length;
}

import { Allow, parse } from 'partial-json';

/**
 * Turns the model's streamed JSON (`{"answer": "...", "citations": [...]}`) into the answer's own text, piece by piece:
 * each push reparses the text so far with a parser built for incomplete JSON and gives what the answer string grew by.
 * Answers are a few kilobytes at most, so reparsing the whole prefix each time costs little.
 */
export class AnswerDeltas {
  private raw = '';
  private sent = '';

  /** Adds streamed text; answers the new part of the answer string, or '' when it has not grown. */
  push(delta: string): string {
    this.raw += delta;
    const answer = this.answerSoFar();
    // A partial escape can parse shorter than before; wait until the text extends what was already given.
    if (answer === undefined || answer.length <= this.sent.length || !answer.startsWith(this.sent)) return '';
    const grown = answer.slice(this.sent.length);
    this.sent = answer;
    return grown;
  }

  private answerSoFar(): string | undefined {
    // Some OpenAI-compatible servers open a Markdown fence even in JSON mode.
    const json = this.raw.replace(/^\s*```(?:json)?\s*/i, '');
    if (!json.trimStart().startsWith('{')) return undefined;
    let value: unknown;
    try {
      value = parse(json, Allow.STR | Allow.OBJ | Allow.ARR);
    } catch {
      return undefined;
    }
    if (typeof value !== 'object' || value === null) return undefined;
    const o = value as Record<string, unknown>;
    const answer = o['answer'] ?? o['text'];
    return typeof answer === 'string' ? answer : undefined;
  }
}

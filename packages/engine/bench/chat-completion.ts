/** An OpenAI chat completion answering `content`, as the benches' stand-in LLM servers send it. */
export function chatCompletion(content: string, model: string): string {
  return JSON.stringify({
    id: model,
    object: 'chat.completion',
    created: 0,
    model,
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content, refusal: null } }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  });
}

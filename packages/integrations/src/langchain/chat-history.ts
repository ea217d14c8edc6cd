import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import type { Memory, RetainItem } from '@mnemos/client';
import { checkScope, type MemoryScope } from '../shared/scope.js';
import { turnContent, turnText, type Speaker } from '../shared/turns.js';

export interface MnemosChatMessageHistoryInput extends MemoryScope {
  /** The conversation: its messages are tagged `session:<sessionId>` in the bank. */
  sessionId: string;
}

/** The engine's largest page of a memory list. */
const PAGE = 1000;

function speakerOf(message: BaseMessage): Speaker {
  const type = message.type;
  if (type === 'human') return 'user';
  if (type === 'ai') return 'assistant';
  throw new TypeError(`MnemosChatMessageHistory stores human and AI messages; a "${type}" message cannot be stored`);
}

function messageOf(memory: Memory): BaseMessage {
  return memory.metadata['role'] === 'assistant'
    ? new AIMessage(turnText('assistant', memory.text))
    : new HumanMessage(turnText('user', memory.text));
}

/**
 * A LangChain chat-message history kept in a Mnemos bank: each message is a memory (so the conversation is also
 * recallable), tagged with its session and labelled with its speaker. Mnemos keeps identical text once per bank and
 * space, so a message repeated word for word appears once, where it was first said.
 *
 * ```ts
 * const history = new MnemosChatMessageHistory({ client, bankId: 'alice', sessionId: 'chat-1' });
 * await history.addMessages([new HumanMessage('Hi!'), new AIMessage('Hello, Alice.')]);
 * ```
 */
export class MnemosChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['mnemos', 'chat_history'];
  private readonly scope: MemoryScope;
  private readonly tag: string;

  constructor(fields: MnemosChatMessageHistoryInput) {
    checkScope(fields, 'MnemosChatMessageHistory');
    if (typeof fields.sessionId !== 'string' || fields.sessionId === '') {
      throw new TypeError('MnemosChatMessageHistory: "sessionId" must name the conversation, e.g. a chat id');
    }
    super();
    this.scope = { client: fields.client, bankId: fields.bankId, space: fields.space };
    this.tag = `session:${fields.sessionId}`;
  }

  /** The session's stored messages (not facts derived from them), oldest first. */
  private async stored(): Promise<Memory[]> {
    const { client, bankId, space } = this.scope;
    const found: Memory[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await client.listMemories(bankId, { space, tags: [this.tag], limit: PAGE, offset });
      found.push(...page.items);
      if (page.items.length < PAGE || offset + PAGE >= page.total) break;
    }
    // The engine lists newest first, and messages stored in one call in the order they were given.
    return found.filter((memory) => memory.source_id === null).reverse();
  }

  async getMessages(): Promise<BaseMessage[]> {
    return (await this.stored()).map(messageOf);
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  override async addMessages(messages: BaseMessage[]): Promise<void> {
    const items: RetainItem[] = messages.map((message) => {
      const speaker = speakerOf(message);
      return { content: turnContent(speaker, message.text), tags: [this.tag], metadata: { role: speaker } };
    });
    if (items.length === 0) return;
    await this.scope.client.retainBatch(this.scope.bankId, items, { space: this.scope.space });
  }

  override async clear(): Promise<void> {
    const { client, bankId } = this.scope;
    for (const memory of await this.stored()) await client.deleteMemory(bankId, memory.id);
  }
}

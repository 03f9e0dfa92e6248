// A differential oracle: conformance-format cases (shared/conformance/README.md) run through linnkit
// 0.21.0's own pieces, wired as a host does (preprocessor pipeline, core, working memory, checkpoint and
// summarization providers, the agent formatter, applySystemReminders). It reproduces the 25 shared cases.
// Copy it into a linnkit 0.21.0 checkout's src/ and run it with bench/linnkit_oracle/fuzz.py.
// Env: ORACLE_IN (a JSON list of cases), ORACLE_OUT (one result line per case), ORACLE_SHARED (set: a
// replay's steps share message objects, so working memory's in-place truncation leaks into later steps),
// ORACLE_TRACE (set: each record also carries linnkit's contextTrace).
import { it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import type { AiMessage } from './contracts';
import {
  AgentContextManager,
  ConversationSession,
} from './context-manager/profiles/agent/context';
import {
  AgentCoreContextProvider,
  AgentWorkingMemoryProvider,
  CheckpointSummarizationProvider,
  ContextProviderRegistry,
  SummarizationProvider,
} from './context-manager/profiles/agent/context/providers';
import { createDefaultAgentPreprocessorPipeline } from './context-manager/profiles/agent/preprocessors';
import {
  contextPolicyToContextBuilderConfig,
  contextPolicyToMustKeepPolicy,
  contextPolicyToPreprocessorOptions,
  createFenceRegistry,
  formatAgentLlmMessages,
  mergeContextPolicy,
} from './context-manager/shared';
import { applySystemReminders } from './runtime-kernel/system-reminder';

function esc(v: unknown): string {
  return String(v).replace(/&/g, '&amp;').replace(/"/g, '&quot;');
}

function fenceRegistry(descriptors: any[]) {
  if (!descriptors || descriptors.length === 0) return undefined;
  return createFenceRegistry(descriptors.map((d) => ({
    ...d,
    formatter: (content: string, attrs: Record<string, unknown>) => {
      const a = Object.entries(attrs ?? {}).map(([k, v]) => ` ${k}="${esc(v)}"`).join('');
      return `<${d.kind}${a}>${content}</${d.kind}>`;
    },
  })));
}

function tokenizer(spec: any) {
  if (spec.kind !== 'mock') return undefined;
  return {
    estimateText: () => spec.tokensPerText ?? 10,
    estimateMessage: (m: any) => spec.tokensPerMessage
      + (spec.charsPerToken ? Math.ceil(String(m.content ?? '').length / spec.charsPerToken) : 0),
  };
}

async function runBuild(c: any, messages: AiMessage[], tick: any) {
  const policy = mergeContextPolicy({ hostFallback: c.hostFallbackPolicy, agentSpec: c.contextPolicy });
  const registry = fenceRegistry(c.fences);
  const pipeline = createDefaultAgentPreprocessorPipeline(
    { debugMode: false, model: 'oracle-model', toolSummaryProvider: { getTool: () => undefined } as any },
    { fenceRegistry: registry, ...contextPolicyToPreprocessorOptions(policy) },
  );
  const record: any = { error: null };
  let pre;
  try {
    pre = await pipeline.process(messages);
  } catch (error: any) {
    return { error: { code: error.code ?? 'UNKNOWN' }, preprocessedIds: null };
  }
  record.preprocessedIds = pre.messages.map((m) => m.id);
  const builderConfig = contextPolicyToContextBuilderConfig(policy);
  const providers = new ContextProviderRegistry();
  providers.register(new AgentCoreContextProvider({ mustKeepPolicy: contextPolicyToMustKeepPolicy(policy) }));
  providers.register(new AgentWorkingMemoryProvider(builderConfig));
  providers.register(new CheckpointSummarizationProvider(policy.checkpoint));
  const totalBudget = policy.budget!.maxTokens! - policy.budget!.reservedForResponse!;
  providers.register(new SummarizationProvider({
    agentId: policy.summarization?.agentId ?? 'history_compression',
    modelId: 'oracle-model',
    maxSummaryTokens: Math.floor(totalBudget * (policy.summarization?.budgetPercentage ?? 0.12)),
    language: 'zh',
    failureBehavior: policy.summarization?.failureBehavior,
    maxRetries: 3,
    retryDelayMs: 0,
  }));
  const manager = new AgentContextManager({
    debugMode: false,
    customConfig: builderConfig,
    providerRegistry: providers,
    tokenizer: tokenizer(c.tokenizer) as any,
    tokenizerModelId: 'oracle-model',
  });
  const generate = async () => {
    if (c.summary.error !== undefined) throw new Error(c.summary.error);
    return { generatedText: c.summary.text };
  };
  let built;
  try {
    built = await manager.buildContextFromPreprocessedMessages(
      { promptKey: 'default', query: '' } as any, new ConversationSession(''), pre.messages, totalBudget,
      undefined, undefined, generate as any,
      { policy: policy.contextTrace, effectiveContextPolicy: policy },
    );
  } catch (error: any) {
    const text = String(error?.message ?? error);
    return { error: { code: text.includes('摘要') ? 'SUMMARIZATION_FAILED' : 'UNKNOWN:' + text.slice(0, 200) },
      preprocessedIds: record.preprocessedIds };
  }
  const finalMessages = built.messages;
  record.keptIds = finalMessages.map((m: AiMessage) => m.id);
  const strategies: string[] = built.processingStats?.strategiesApplied ?? built.strategiesApplied ?? [];
  let wire: any[] = formatAgentLlmMessages(finalMessages, { fenceRegistry: registry });
  record.reminderHitRuleIds = [];
  record.reminderText = null;
  if (tick) {
    const lastUser = messages.map((m) => m.type).lastIndexOf('user_input');
    const history: any[] = [];
    messages.forEach((m, i) => {
      if (m.type === 'user_input' && m.role === 'user') history.push({ type: 'user_input' });
      if (i > lastUser && m.type === 'tool_calls') history.push({ type: 'tool_call_decision' });
    });
    const phase = tick.finalStepPolicy === 'force_tools'
      ? (tick.stepCount === tick.maxSteps - 1 ? 'force_tools' : 'running')
      : (tick.stepCount >= tick.maxSteps ? 'force_final_answer' : 'running');
    const before = wire.length ? String(wire[wire.length - 1].content ?? '') : '';
    let hits: string[] = [];
    wire = applySystemReminders({
      llmMessages: wire,
      ctx: {
        request: { query: '', promptKey: 'default', mode: 'agent', availableTools: tick.availableTools } as any,
        history,
        executorLocal: {
          stepCount: tick.stepCount,
          maxSteps: tick.maxSteps,
          remainingSteps: tick.maxSteps - tick.stepCount,
          phase,
          ...(tick.finalStepPolicy ? { finalStepPolicy: tick.finalStepPolicy } : {}),
          ...(tick.finalStepForcedTools ? { finalStepForcedTools: tick.finalStepForcedTools } : {}),
          contextCheckpointToolName: policy.checkpoint?.triggerToolName,
          systemReminderPolicy: policy.systemReminder,
        } as any,
      } as any,
      onInjected: ({ ruleIds }) => { hits = ruleIds; },
    }) as any[];
    record.reminderHitRuleIds = hits;
    if (hits.length) {
      const after = String(wire[wire.length - 1].content);
      record.reminderText = after.slice(before.length);
    }
  }
  record.wire = wire.map((w) => {
    const o: any = { role: w.role, content: w.content };
    for (const k of ['tool_calls', 'tool_call_id', 'reasoning_details', 'provider_empty_replay_field']) {
      if (k in w) o[k] = w[k];
    }
    return o;
  });
  record.summarizationFired = strategies.includes('ai_history_summarization');
  record.checkpointFired = strategies.includes('checkpoint_trim_before');
  record.finalTokens = built.contextTrace?.finalTokens ?? built.tokenUsage?.used; // the trace may be off
  record.summaryEvents = (built.events ?? []).filter((e: any) => e.type === 'history_summary');
  if (process.env.ORACLE_TRACE) record.trace = built.contextTrace ?? null; // for trace-level comparisons
  return record;
}

function summaryMessage(e: any): AiMessage {
  return {
    id: e.id, role: 'system', type: 'history_summary', content: e.content || '', timestamp: e.timestamp,
    metadata: {
      messageType: 'summary', originalMessageCount: e.original_message_count,
      compressionRatio: e.compression_ratio, includedOldSummary: e.included_old_summary,
      replacedMessageIds: Array.isArray(e.replaced_message_ids) ? e.replaced_message_ids : [],
      summarySeq: e.summary_seq,
    },
  } as AiMessage;
}

async function runCase(c: any) {
  if (c.kind !== 'replay') {
    const r = await runBuild(c, c.messages, c.tick);
    delete r.summaryEvents;
    return { name: c.name, ...r };
  }
  const persisted: Array<{ upto: number; message: AiMessage }> = [];
  const steps: any[] = [];
  const persistedAfter: number[] = [];
  for (const step of c.steps) {
    const list: AiMessage[] = [];
    for (let i = 0; i <= step.upto; i += 1) {
      for (const p of persisted) if (p.upto === i) list.push(process.env.ORACLE_SHARED ? p.message : structuredClone(p.message));
      if (i < step.upto) list.push(process.env.ORACLE_SHARED ? c.messages[i] : structuredClone(c.messages[i]));
    }
    const r = await runBuild(c, list, step.tick);
    await new Promise((resolve) => setImmediate(resolve)); // a long replay: let vitest's worker RPC through
    const events = r.summaryEvents ?? [];
    delete r.summaryEvents;
    steps.push(r);
    for (const e of events) {
      persisted.push({ upto: step.upto, message: summaryMessage(e) });
      persistedAfter.push(step.upto);
    }
  }
  return { name: c.name, steps, persistedAfter };
}

it('oracle', async () => {
  const cases = JSON.parse(readFileSync(process.env.ORACLE_IN!, 'utf8'));
  const out: any[] = [];
  for (const c of cases) {
    try {
      out.push(await runCase(c));
    } catch (error: any) {
      out.push({ name: c.name, harness: String(error?.message ?? error).slice(0, 300) });
    }
  }
  writeFileSync(process.env.ORACLE_OUT!, out.map((o) => JSON.stringify(o)).join('\n') + '\n');
}, 600_000);

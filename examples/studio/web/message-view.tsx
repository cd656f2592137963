import { getToolName, isToolUIPart, type UIMessage } from 'ai';
import { CustomerCard, OrderCard, ProductCard, isCard } from './cards.tsx';

type Part = UIMessage['parts'][number];
type ToolPart = Extract<Part, { toolCallId: string }>;

/** What a write tool is about to do, in words a representative can approve. */
const approvalTitles: Record<string, (input: Record<string, unknown>) => string> = {
  refundOrder: (input) =>
    `Refund order ${input.orderId}${typeof input.amount === 'number' ? ` (${(input.amount / 100).toFixed(2)})` : ' in full'}`,
  cancelOrder: (input) => `Cancel order ${input.orderId}`,
  createTicket: (input) => `Create ticket “${input.subject}”`,
  addTicketComment: (input) => `Comment on ticket ${input.ticketId}`,
};

/** One chat message: text, cards, tool activity and approval cards, in stream order. */
export function MessageView({
  message,
  disabled,
  onApproval,
}: {
  message: UIMessage;
  disabled: boolean;
  onApproval: (id: string, approved: boolean) => void;
}) {
  const model = (message.metadata as { model?: string } | undefined)?.model;
  return (
    <article className={`message ${message.role}`} data-role={message.role}>
      <div className="message-meta">
        {message.role === 'user' ? 'You' : 'Assistant'}
        {model?.startsWith('deskpilot:') && (
          <span className="tag" title={model}>
            offline demo model
          </span>
        )}
      </div>
      {message.parts.map((part, index) => (
        <PartView
          key={isToolUIPart(part) ? part.toolCallId : index}
          part={part}
          disabled={disabled}
          onApproval={onApproval}
        />
      ))}
    </article>
  );
}

function PartView({
  part,
  disabled,
  onApproval,
}: {
  part: Part;
  disabled: boolean;
  onApproval: (id: string, approved: boolean) => void;
}) {
  if (part.type === 'text') return <p className="text">{part.text}</p>;
  if (!isToolUIPart(part)) return null;
  const tool = part as ToolPart;
  const name = getToolName(tool);
  const input = (tool.input ?? {}) as Record<string, unknown>;

  switch (tool.state) {
    case 'approval-requested':
      return (
        <div className="approval" role="group" aria-label="Approval needed" data-testid="approval-card">
          <div className="approval-title">{(approvalTitles[name] ?? (() => name))(input)}</div>
          {typeof input.reason === 'string' && <div className="muted">Reason: {input.reason}</div>}
          <div className="approval-actions">
            <button
              type="button"
              className="primary"
              disabled={disabled}
              onClick={() => onApproval(tool.approval.id, true)}
            >
              Approve
            </button>
            <button type="button" disabled={disabled} onClick={() => onApproval(tool.approval.id, false)}>
              Deny
            </button>
          </div>
        </div>
      );
    case 'approval-responded':
      return (
        <ToolChip
          name={name}
          input={input}
          status={tool.approval.approved ? 'approved, running…' : 'denied'}
          tone={tool.approval.approved ? 'busy' : 'denied'}
        />
      );
    case 'output-denied':
      return <ToolChip name={name} input={input} status="denied" tone="denied" />;
    case 'output-error':
      return <ToolChip name={name} input={input} status={tool.errorText} tone="error" />;
    case 'output-available': {
      const output = tool.output as Record<string, unknown>;
      if (isCard(output)) {
        if (output.card === 'order') return <OrderCard card={output} />;
        if (output.card === 'product') return <ProductCard card={output} />;
        return <CustomerCard card={output} />;
      }
      const failed = output && output.ok === false;
      return (
        <ToolChip
          name={name}
          input={input}
          status={failed ? String(output.message ?? 'not done') : 'done'}
          tone={failed ? 'error' : 'done'}
          output={output}
        />
      );
    }
    default:
      return <ToolChip name={name} input={input} status="running…" tone="busy" />;
  }
}

function ToolChip({
  name,
  input,
  status,
  tone,
  output,
}: {
  name: string;
  input: Record<string, unknown>;
  status: string;
  tone: 'busy' | 'done' | 'denied' | 'error';
  output?: unknown;
}) {
  const subject = ['orderId', 'ticketId', 'customerId', 'sku', 'query', 'businessUnitId']
    .map((key) => input[key])
    .find((value) => typeof value === 'string');
  return (
    <details className={`tool ${tone}`} data-tool={name}>
      <summary>
        <span className="mono">{name}</span>
        {subject ? <span className="muted"> {String(subject)}</span> : null}
        <span className="tool-status"> · {status}</span>
      </summary>
      <pre>{JSON.stringify(output === undefined ? { input } : { input, output }, null, 2)}</pre>
    </details>
  );
}

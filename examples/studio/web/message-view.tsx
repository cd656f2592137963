import { getToolName, isToolUIPart, type UIMessage } from 'ai';
import { useState } from 'react';
import { CustomerCard, OrderCard, ProductCard, isCard } from './cards.tsx';
import { EditForm, MessageActions } from './message-actions.tsx';
import { StepUpApprove, stepUpOf } from './step-up.tsx';

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

/** The card a write tool's pre-check gave its approval request (what a person needs to decide). */
interface ApprovalCard {
  summary: string;
  fields: Array<{ label: string; value: string }>;
}
const isApprovalCard = (value: unknown): value is ApprovalCard =>
  typeof (value as ApprovalCard | undefined)?.summary === 'string' && Array.isArray((value as ApprovalCard).fields);

/** Who decided an approval card, and when: the conversation keeps it as a `data-approval-decision` part. */
interface ApprovalDecision {
  approved: boolean;
  by: string | null;
  at: string;
  reason: string | null;
  /** How the approver confirmed it was them, when the approval needed a step-up. */
  stepUp?: {
    method: 'passkey' | 'password' | 'recent-sign-in';
    credentialId: string | null;
    /** A recent sign-in at the company's identity provider (which one). */
    atProvider?: { provider: string };
  };
}
const reasons: Record<string, string> = {
  expired: 'it expired',
  altered: 'it was altered',
  capability_revoked: 'the permission was revoked',
  unanswered: 'it was not answered',
  superseded: 'a new message came first',
  step_up_required: 'it needed your confirmation (passkey or password)',
  step_up_failed: 'the confirmation was not valid for it',
};
const stepUpMethods: Record<string, string> = {
  passkey: 'with a passkey',
  password: 'with their password',
  'recent-sign-in': 'by a recent sign-in',
};

/** How the approver confirmed it was them: "with a passkey", "by signing in again at acme"… */
function confirmation(stepUp: NonNullable<ApprovalDecision['stepUp']>): string {
  return stepUp.atProvider ? `by signing in again at ${stepUp.atProvider.provider}` : stepUpMethods[stepUp.method]!;
}

/** "Approved by alice@example.com at 10:22", "Denied by …", or why nobody's decision stopped it. */
function DecisionLine({ decision }: { decision: ApprovalDecision }) {
  const time = new Date(decision.at).toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });
  const text =
    decision.by === null
      ? `Not run at ${time}: ${reasons[decision.reason ?? ''] ?? decision.reason ?? 'refused'}`
      : `${decision.approved ? 'Approved' : 'Denied'} by ${decision.by} at ${time}${decision.stepUp ? `, confirmed ${confirmation(decision.stepUp)}` : ''}`;
  return (
    <p className={`decision ${decision.approved ? 'ok' : 'warn'}`} data-testid="approval-decision">
      {text}
    </p>
  );
}

/** A file the user attached: an image shown, a PDF named. */
function Attachment({ part }: { part: Extract<Part, { type: 'file' }> }) {
  const name = part.filename ?? (part.mediaType === 'application/pdf' ? 'document.pdf' : 'image');
  if (part.mediaType.startsWith('image/'))
    return <img className="attachment" src={part.url} alt={name} data-testid="attachment" />;
  return (
    <a className="attachment file" href={part.url} download={name} data-testid="attachment">
      📄 {name}
    </a>
  );
}

/** What a message view offers besides approvals: its versions, and a new one (an edit, another answer). */
export interface MessageBranching {
  /** The ids of this message and its other versions, oldest first; absent when it has none. */
  siblings: readonly string[] | undefined;
  /** A new version of a question: its text (the files it carried stay). */
  onEdit: (text: string) => void;
  /** Another answer in place of this one. */
  onRegenerate: () => void;
  /** Shows another version: one of `siblings`. */
  onSwitch: (messageId: string) => void;
}

/** One chat message: text, cards, tool activity and approval cards, in stream order. */
export function MessageView({
  message,
  disabled,
  onApproval,
  branching,
}: {
  message: UIMessage;
  disabled: boolean;
  onApproval: (id: string, approved: boolean, proof?: string) => void;
  branching: MessageBranching;
}) {
  const [editing, setEditing] = useState(false);
  const model = (message.metadata as { model?: string } | undefined)?.model;
  const text = message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
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
      {message.parts.map((part, index) =>
        editing && part.type === 'text' ? null : (
          <PartView
            key={isToolUIPart(part) ? part.toolCallId : index}
            part={part}
            disabled={disabled}
            onApproval={onApproval}
          />
        ),
      )}
      {editing ? (
        <EditForm
          text={text}
          onCancel={() => setEditing(false)}
          onSave={(edited) => {
            setEditing(false);
            branching.onEdit(edited);
          }}
        />
      ) : (
        <MessageActions
          role={message.role}
          messageId={message.id}
          siblings={branching.siblings}
          disabled={disabled}
          onEdit={() => setEditing(true)}
          onRegenerate={branching.onRegenerate}
          onSwitch={branching.onSwitch}
        />
      )}
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
  onApproval: (id: string, approved: boolean, proof?: string) => void;
}) {
  if (part.type === 'text') return <p className="text">{part.text}</p>;
  if (part.type === 'file') return <Attachment part={part} />;
  if (part.type === 'data-approval-decision') return <DecisionLine decision={part.data as ApprovalDecision} />;
  if (!isToolUIPart(part)) return null;
  const tool = part as ToolPart;
  const name = getToolName(tool);
  const input = (tool.input ?? {}) as Record<string, unknown>;

  switch (tool.state) {
    case 'approval-requested': {
      const card = isApprovalCard(tool.approval.descriptor) ? tool.approval.descriptor : undefined;
      const stepUp = stepUpOf(tool.approval.descriptor);
      return (
        <div className="approval" role="group" aria-label="Approval needed" data-testid="approval-card">
          <div className="approval-title">{card?.summary ?? (approvalTitles[name] ?? (() => name))(input)}</div>
          {card ? (
            <dl className="approval-fields">
              {card.fields.map((field) => (
                <div key={field.label}>
                  <dt>{field.label}</dt>
                  <dd>{field.value}</dd>
                </div>
              ))}
            </dl>
          ) : (
            typeof input.reason === 'string' && <div className="muted">Reason: {input.reason}</div>
          )}
          {stepUp ? (
            <StepUpApprove
              approvalId={tool.approval.id}
              binding={stepUp.binding}
              disabled={disabled}
              onApproved={(proof) => onApproval(tool.approval.id, true, proof)}
              onDenied={() => onApproval(tool.approval.id, false)}
            />
          ) : (
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
          )}
        </div>
      );
    }
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

/**
 * Dialogs (React Aria: focus moves in, is trapped, and returns to the trigger on close; Escape closes).
 * A destructive action asks first, and its confirming button repeats the verb (`Refund`, `Delete`...).
 */
import { useState, type ReactNode } from 'react';
import { Button, Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { ErrorNote } from './feedback';

export function ConfirmAction({
  verb,
  title,
  children,
  onConfirm,
  pending,
  error,
  triggerLabel,
  destructive = true,
  confirm,
}: {
  /** The trigger's and the confirming button's text. */
  verb: string;
  /** The confirming button's text when it is shorter than the trigger's (`Delete test data` asks, `Delete` confirms). */
  confirm?: string;
  title: string;
  children?: ReactNode;
  /** Resolves when done: the dialog closes; rejects: it stays open with the error. */
  onConfirm: () => Promise<unknown>;
  pending?: boolean;
  error?: unknown;
  triggerLabel?: string;
  destructive?: boolean;
}) {
  const [open, setOpen] = useState(false);
  return (
    <DialogTrigger isOpen={open} onOpenChange={setOpen}>
      <Button className={destructive ? 'button danger' : 'button'} aria-label={triggerLabel}>
        {verb}
      </Button>
      <ModalOverlay className="overlay" isDismissable>
        <Modal className="modal">
          <Dialog className="dialog" role="alertdialog">
            <Heading slot="title">{title}</Heading>
            {children}
            <ErrorNote error={error} />
            <div className="actions">
              <Button className="button" onPress={() => setOpen(false)}>
                Cancel
              </Button>
              <Button
                className={destructive ? 'button danger' : 'button primary'}
                isDisabled={pending}
                onPress={() => {
                  onConfirm().then(
                    () => setOpen(false),
                    () => undefined,
                  );
                }}
              >
                {confirm ?? verb}
              </Button>
            </div>
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

/** A dialog opened by a button, holding a form or anything else; `close` is passed to the content. */
export function FormDialog({
  trigger,
  title,
  children,
  triggerClass = 'button',
  triggerLabel,
}: {
  trigger: string;
  title: string;
  children: (close: () => void) => ReactNode;
  triggerClass?: string;
  /** The trigger's accessible name when its text alone is ambiguous (`Edit` on every row). */
  triggerLabel?: string;
}) {
  const [open, setOpen] = useState(false);
  return (
    <DialogTrigger isOpen={open} onOpenChange={setOpen}>
      <Button className={triggerClass} aria-label={triggerLabel}>
        {trigger}
      </Button>
      <ModalOverlay className="overlay" isDismissable>
        <Modal className="modal">
          <Dialog className="dialog">
            <Heading slot="title">{title}</Heading>
            {children(() => setOpen(false))}
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

/**
 * A secret shown once (an API key, a webhook signing secret): in a dialog, with `Copy`; it lives
 * only in this component's state and is gone when the dialog closes.
 */
export function SecretDialog({ title, secret, onClose }: { title: string; secret: string; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <ModalOverlay className="overlay" isOpen onOpenChange={(open) => !open && onClose()}>
      <Modal className="modal">
        <Dialog className="dialog">
          <Heading slot="title">{title}</Heading>
          <p>Copy it now: it is shown once and svc cannot show it again.</p>
          <code className="secret" aria-label="Secret">
            {secret}
          </code>
          <div className="actions">
            <Button
              className="button primary"
              onPress={() => {
                void navigator.clipboard?.writeText(secret).then(() => setCopied(true));
              }}
            >
              Copy
            </Button>
            <Button className="button" onPress={onClose}>
              Done
            </Button>
          </div>
          <p role="status" className="muted">
            {copied ? 'Copied.' : ''}
          </p>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}

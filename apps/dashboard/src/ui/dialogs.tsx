/**
 * Dialogs (React Aria: focus moves in, is trapped, and returns to the trigger on close; Escape closes).
 * A destructive action asks first, and its confirming button repeats the verb (`Refund`, `Delete`...).
 */
import { useState, type ReactNode } from 'react';
import { Button, Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { buttonClass, type ButtonVariant } from './button';
import { ErrorNote } from './feedback';

const OVERLAY = 'fixed inset-0 z-40 flex items-center justify-center bg-scrim p-4';
const MODAL = 'max-h-[90vh] w-full max-w-lg overflow-auto rounded-lg border border-line bg-raised text-fg shadow-md';
const DIALOG = 'p-6 outline-none';
const TITLE = 'm-0 mb-3 text-lg font-semibold';

interface ConfirmProps {
  /** The confirming button's text, repeating the action's verb. */
  verb: string;
  title: string;
  children?: ReactNode;
  /** Resolves when done: the dialog closes; rejects: it stays open with the error. */
  onConfirm: () => Promise<unknown>;
  pending?: boolean;
  error?: unknown;
  destructive?: boolean;
}

/** The asking dialog alone, opened by its owner (a menu item, a selection's button). */
export function ConfirmDialog({
  isOpen,
  onOpenChange,
  verb,
  title,
  children,
  onConfirm,
  pending,
  error,
  destructive = true,
}: ConfirmProps & { isOpen: boolean; onOpenChange: (open: boolean) => void }) {
  return (
    <ModalOverlay className={OVERLAY} isDismissable isOpen={isOpen} onOpenChange={onOpenChange}>
      <Modal className={MODAL}>
        <Dialog className={DIALOG} role="alertdialog">
          <Heading slot="title" className={TITLE}>
            {title}
          </Heading>
          <div className="text-sm">{children}</div>
          <ErrorNote error={error} />
          <div className="mt-6 flex flex-wrap justify-end gap-2">
            <Button className={buttonClass('secondary')} onPress={() => onOpenChange(false)}>
              Cancel
            </Button>
            <Button
              className={buttonClass(destructive ? 'danger' : 'primary')}
              isDisabled={pending}
              onPress={() => {
                onConfirm().then(
                  () => onOpenChange(false),
                  () => undefined,
                );
              }}
            >
              {verb}
            </Button>
          </div>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}

/** A button that asks in a dialog before it acts. */
export function ConfirmAction({
  verb,
  confirm,
  triggerLabel,
  triggerVariant = 'secondary',
  ...props
}: Omit<ConfirmProps, 'verb'> & {
  /** The trigger's and the confirming button's text. */
  verb: string;
  /** The confirming button's text when it is shorter than the trigger's (`Delete test data` asks, `Delete` confirms). */
  confirm?: string;
  triggerLabel?: string;
  triggerVariant?: ButtonVariant;
}) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button className={buttonClass(triggerVariant)} aria-label={triggerLabel} onPress={() => setOpen(true)}>
        {verb}
      </Button>
      <ConfirmDialog {...props} verb={confirm ?? verb} isOpen={open} onOpenChange={setOpen} />
    </>
  );
}

/** A dialog opened by a button, holding a form or anything else; `close` is passed to the content. */
export function FormDialog({
  trigger,
  title,
  children,
  triggerClass = buttonClass('secondary'),
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
      <ModalOverlay className={OVERLAY} isDismissable>
        <Modal className={MODAL}>
          <Dialog className={DIALOG}>
            <Heading slot="title" className={TITLE}>
              {title}
            </Heading>
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
    <ModalOverlay className={OVERLAY} isOpen onOpenChange={(open) => !open && onClose()}>
      <Modal className={MODAL}>
        <Dialog className={DIALOG}>
          <Heading slot="title" className={TITLE}>
            {title}
          </Heading>
          <p>Copy it now: it is shown once and svc cannot show it again.</p>
          <code className="secret" aria-label="Secret">
            {secret}
          </code>
          <div className="actions">
            <Button
              className={buttonClass('primary')}
              onPress={() => {
                void navigator.clipboard?.writeText(secret).then(() => setCopied(true));
              }}
            >
              Copy
            </Button>
            <Button className={buttonClass('secondary')} onPress={onClose}>
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

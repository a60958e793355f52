/**
 * A menu of actions behind one button (React Aria: arrow keys move, Enter or a click chooses,
 * Escape closes and focus returns to the button): the header's `More actions`, a table row's
 * actions. An item that destroys opens the dialog that asks first; the menu itself never does.
 */
import type { ReactNode } from 'react';
import { Button, Menu, MenuItem, MenuTrigger, Popover } from 'react-aria-components';
import { buttonClass } from './button';

export interface MenuAction {
  id: string;
  label: string;
  onAction: () => void;
  /** Shown in the danger colour: the dialog it opens destroys something. */
  destructive?: boolean;
  disabled?: boolean;
}

export function ActionMenu({
  label,
  items,
  children,
  quiet = false,
}: {
  /** The button's accessible name (`More actions`, `Actions for key ••••1234`). */
  label: string;
  items: readonly MenuAction[];
  /** The button's visible text; a `⋯` when none. */
  children?: ReactNode;
  quiet?: boolean;
}) {
  if (items.length === 0) return null;
  return (
    <MenuTrigger>
      <Button aria-label={label} className={buttonClass(quiet ? 'quiet' : 'secondary', quiet ? 'min-w-10 px-2' : '')}>
        {children ?? <span aria-hidden="true">⋯</span>}
      </Button>
      <Popover
        placement="bottom end"
        className="min-w-44 rounded-md border border-line bg-raised p-1 shadow-md outline-none"
      >
        <Menu
          className="outline-none"
          disabledKeys={items.filter((item) => item.disabled).map((item) => item.id)}
          onAction={(key) => items.find((item) => item.id === key)?.onAction()}
        >
          {items.map((item) => (
            <MenuItem
              key={item.id}
              id={item.id}
              className={`cursor-pointer rounded-sm px-3 py-2 text-sm outline-none data-disabled:opacity-50 data-focused:bg-surface ${item.destructive ? 'text-danger' : 'text-fg'}`}
            >
              {item.label}
            </MenuItem>
          ))}
        </Menu>
      </Popover>
    </MenuTrigger>
  );
}

/** The signed-out pages' search params: where sign-in returns to, and the reset link's token. */
import { text } from '../../search-params';

export interface SignInSearch {
  redirect?: string;
}
export const validateSignInSearch = (search: Record<string, unknown>): SignInSearch => ({
  redirect: text(search.redirect, 2000),
});

export interface ResetPasswordSearch {
  token?: string;
}
export const validateResetPasswordSearch = (search: Record<string, unknown>): ResetPasswordSearch => ({
  token: text(search.token),
});

export interface ConfirmEmailSearch {
  token?: string;
}
export const validateConfirmEmailSearch = (search: Record<string, unknown>): ConfirmEmailSearch => ({
  token: text(search.token),
});

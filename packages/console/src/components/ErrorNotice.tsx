// Shows what went wrong: an API problem's detail, in a live region so screen readers announce it.
import { messageOf } from '../api';

export function ErrorNotice({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <p class="notice error" role="alert">
      {messageOf(error)}
    </p>
  );
}

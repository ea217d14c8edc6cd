import { Page } from '../components/Page';
import { paths } from '../paths';

export function NotFound() {
  return (
    <Page title="Page not found">
      <p>
        There is no console page at this address. <a href={paths.home}>Go to the console's start page</a>.
      </p>
    </Page>
  );
}

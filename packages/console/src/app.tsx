// Routes of the console and who may see them: signed-out pages, the first-project screen, and project pages that
// need a session (signed-out visitors are sent to sign in and come back).
import type { ComponentChildren, ComponentType } from 'preact';
import { useEffect } from 'preact/hooks';
import { ErrorBoundary, LocationProvider, Route, Router, useLocation, useRoute } from 'preact-iso';
import { QueryClient, QueryClientProvider } from '@tanstack/preact-query';
import { ApiError } from './api';
import { ErrorNotice } from './components/ErrorNotice';
import { Layout } from './components/Layout';
import { BASE, param, paths } from './paths';
import { useProjects } from './projects';
import { useSession } from './session';
import { ApiKeys } from './pages/ApiKeys';
import { AuthForm } from './pages/AuthForm';
import { Bank } from './pages/Bank';
import { Banks } from './pages/Banks';
import { Connect } from './pages/Connect';
import { MemoryRecord } from './pages/MemoryRecord';
import { NotFound } from './pages/NotFound';
import { OAuthClients } from './pages/OAuthClients';
import { OAuthConsent } from './pages/OAuthConsent';
import { Playground } from './pages/Playground';
import { Projects } from './pages/Projects';
import { Usage } from './pages/Usage';
import { Welcome } from './pages/Welcome';

const queryClient = new QueryClient({
  defaultOptions: {
    // A refused request (4xx) will be refused again; only network failures and 5xx are worth one retry.
    queries: { retry: (count, error) => count < 1 && !(error instanceof ApiError && error.status < 500) },
  },
});

function Redirect({ to }: { to: string }) {
  const location = useLocation();
  useEffect(() => location.route(to, true), [to]);
  return null;
}

/** Renders its page only for a signed-in account. */
function SignedIn({ children }: { children: ComponentChildren }) {
  const { account, error } = useSession();
  const location = useLocation();
  if (error !== null)
    return (
      <main id="main">
        <ErrorNotice error={error} />
      </main>
    );
  if (account === undefined) return <p>Loading…</p>;
  if (account === null) return <Redirect to={`${paths.signIn}?next=${encodeURIComponent(location.url)}`} />;
  return <>{children}</>;
}

function Home() {
  const projects = useProjects();
  if (projects.error !== null)
    return (
      <Layout>
        <ErrorNotice error={projects.error} />
      </Layout>
    );
  if (projects.data === undefined) return <p>Loading…</p>;
  const first = projects.data[0];
  return <Redirect to={first === undefined ? paths.welcome : paths.project(first.id, 'connect')} />;
}

const projectPage = (Page: ComponentType<{ project: string }>) => () => {
  const { params } = useRoute();
  const project = param(params['project']);
  return (
    <SignedIn>
      <Layout project={project}>
        <Page project={project} />
      </Layout>
    </SignedIn>
  );
};

const ConnectRoute = projectPage(Connect);
const KeysRoute = projectPage(ApiKeys);
const ClientsRoute = projectPage(OAuthClients);
const UsageRoute = projectPage(Usage);
const BanksRoute = projectPage(Banks);
const PlaygroundRoute = projectPage(Playground);

function BankRoute() {
  const { params } = useRoute();
  const project = param(params['project']);
  return (
    <SignedIn>
      <Layout project={project}>
        <Bank project={project} bank={param(params['bank'])} />
      </Layout>
    </SignedIn>
  );
}

function MemoryRoute() {
  const { params } = useRoute();
  const project = param(params['project']);
  return (
    <SignedIn>
      <Layout project={project}>
        <MemoryRecord project={project} bank={param(params['bank'])} id={param(params['memory'])} />
      </Layout>
    </SignedIn>
  );
}

function SignInRoute() {
  const { query } = useRoute();
  return (
    <main id="main">
      <AuthForm mode="signin" next={query['next']} />
    </main>
  );
}

const SignUpRoute = () => (
  <main id="main">
    <AuthForm mode="signup" />
  </main>
);
const HomeRoute = () => (
  <SignedIn>
    <Home />
  </SignedIn>
);
const WelcomeRoute = () => (
  <SignedIn>
    <Layout>
      <Welcome />
    </Layout>
  </SignedIn>
);
const ProjectsRoute = () => (
  <SignedIn>
    <Layout>
      <Projects />
    </Layout>
  </SignedIn>
);
const OAuthRoute = () => {
  const { params } = useRoute();
  return (
    <main id="main" class="narrow">
      <OAuthConsent uid={param(params['uid'])} />
    </main>
  );
};
const NotFoundRoute = () => (
  <main id="main">
    <NotFound />
  </main>
);

export function App() {
  return (
    <QueryClientProvider client={queryClient}>
      <LocationProvider>
        <ErrorBoundary>
          <Router>
            <Route path={`${BASE}/`} component={HomeRoute} />
            <Route path={BASE} component={HomeRoute} />
            <Route path={paths.signIn} component={SignInRoute} />
            <Route path={paths.signUp} component={SignUpRoute} />
            <Route path={paths.welcome} component={WelcomeRoute} />
            <Route path={paths.projects} component={ProjectsRoute} />
            <Route path={`${BASE}/p/:project/connect`} component={ConnectRoute} />
            <Route path={`${BASE}/p/:project/keys`} component={KeysRoute} />
            <Route path={`${BASE}/p/:project/oauth-clients`} component={ClientsRoute} />
            <Route path={`${BASE}/p/:project/usage`} component={UsageRoute} />
            <Route path={`${BASE}/p/:project/memory`} component={BanksRoute} />
            <Route path={`${BASE}/p/:project/memory/:bank`} component={BankRoute} />
            <Route path={`${BASE}/p/:project/memory/:bank/:memory`} component={MemoryRoute} />
            <Route path={`${BASE}/p/:project/playground`} component={PlaygroundRoute} />
            <Route path={`${BASE}/oauth/:uid`} component={OAuthRoute} />
            <Route default component={NotFoundRoute} />
          </Router>
        </ErrorBoundary>
      </LocationProvider>
    </QueryClientProvider>
  );
}

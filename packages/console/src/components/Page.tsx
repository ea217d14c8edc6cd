// A page's heading: sets the document title and moves focus to the heading when the page changes, so keyboard and
// screen-reader users land on the new content.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Mnemos console`;
    heading.current?.focus();
  }, [title]);
  return (
    <section class="page">
      <h1 ref={heading} tabIndex={-1}>
        {title}
      </h1>
      {children}
    </section>
  );
}

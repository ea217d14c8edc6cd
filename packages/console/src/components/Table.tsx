// A data table that scrolls sideways inside its own box on narrow screens, with a caption for screen readers and
// column headers; an empty header names an actions column for screen readers only.
import type { ComponentChildren } from 'preact';

export function Table({
  caption,
  headers,
  children,
}: {
  caption: string;
  headers: string[];
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {headers.map((header) => (
              <th scope="col" key={header}>
                {header === '' ? <span class="visually-hidden">Actions</span> : header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { SecretOnceBox } from "./SecretOnceBox";

describe("the one-time secret", () => {
  const html = renderToStaticMarkup(
    <SecretOnceBox secret="sim_abc123" prefix="token" label="The new token's secret" onDone={() => undefined}>
      Token <strong>ci</strong> (<code>tok-1</code>) was made.
    </SecretOnceBox>,
  );

  it("shows the secret with a Copy button and says it will not be shown again", () => {
    expect(html).toContain('value="sim_abc123"');
    expect(html).toMatch(/data-testid="token-copy"[^>]*>Copy</);
    expect(html).toMatch(/data-testid="token-secret-warning"[^>]*>it will not be shown again\.</);
    expect(html).toMatch(/<input(?=[^>]*readonly="")(?=[^>]*data-testid="token-secret")[^>]*>/);
  });

  it("says what it belongs to, as the caller puts it", () => {
    expect(html).toContain("<strong>ci</strong>");
    expect(html).toContain("<code>tok-1</code>");
  });

  it("wraps a long command in a read-only text area under the caller's prefix", () => {
    const command = renderToStaticMarkup(
      <SecretOnceBox secret="mkdir -p ~/.ssh &amp;&amp; x" prefix="nat" label="The command" multiline onDone={() => undefined}>
        Run it.
      </SecretOnceBox>,
    );
    expect(command).toMatch(/<textarea(?=[^>]*readonly="")(?=[^>]*data-testid="nat-secret")[^>]*>/);
    expect(command).toContain('data-testid="nat-secret-box"');
    expect(command).toContain('data-testid="nat-copy"');
    expect(command).not.toContain("<input");
  });
});

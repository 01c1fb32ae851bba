import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { secretOnce } from "../../lib/team/team";
import { SecretOnceBox } from "./SecretOnceBox";

describe("the one-time secret", () => {
  const shown = secretOnce({
    id: "tok-1", name: "ci", owner: "admin", team: "default", role: "member", created_at: 1, last_used_at: null,
    expires_at: null, revoked_at: null, token: "sim_abc123",
  });
  const html = renderToStaticMarkup(<SecretOnceBox shown={shown} onDone={() => undefined} />);

  it("shows the secret with a Copy button and says it will not be shown again", () => {
    expect(html).toContain('value="sim_abc123"');
    expect(html).toMatch(/data-testid="token-copy"[^>]*>Copy</);
    expect(html).toMatch(/data-testid="token-secret-warning"[^>]*>it will not be shown again\.</);
    expect(html).toMatch(/<input(?=[^>]*readonly="")(?=[^>]*data-testid="token-secret")[^>]*>/);
  });

  it("names the token it belongs to", () => {
    expect(html).toContain("<strong>ci</strong>");
    expect(html).toContain("<code>tok-1</code>");
  });
});

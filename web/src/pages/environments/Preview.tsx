// An entry's preview picture, fetched once the card is on screen, through queues that keep
// most of the browser's connections free (a preview not made yet starts a short session on
// the platform); leaving the page aborts what is still loading.
// data-testid: preview-<id> (the <img>), no-preview-<id>.
import { useEffect, useRef, useState } from "react";
import { TaskQueue } from "../../lib/catalog/taskQueue";
import { authFetch } from "../../lib/auth/token";

/** Previews the gateway has made already come quickly; those it must make wait for one another. */
const CACHED = new TaskQueue(3);
const TO_MAKE = new TaskQueue(1);

async function fetchPicture(url: string, signal: AbortSignal): Promise<Blob | null> {
  const response = await authFetch(url, { signal });
  if (!response.ok) return null;
  return response.blob();
}

export function Preview({ id, url, cached }: { id: string; url: string; cached: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const [visible, setVisible] = useState(false);
  const [picture, setPicture] = useState<string | null | "none">(null);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        setVisible(true);
        observer.disconnect();
      }
    }, { rootMargin: "100px" });
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  useEffect(() => {
    if (!visible) return;
    const controller = new AbortController();
    let objectUrl: string | null = null;
    (cached ? CACHED : TO_MAKE)
      .run(() => fetchPicture(url, controller.signal), controller.signal)
      .then((blob) => {
        if (controller.signal.aborted) return;
        if (!blob) return setPicture("none");
        objectUrl = URL.createObjectURL(blob);
        setPicture(objectUrl);
      })
      .catch(() => { if (!controller.signal.aborted) setPicture("none"); });
    return () => {
      controller.abort(new DOMException("left the page", "AbortError"));
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [cached, url, visible]);

  return (
    <div className="env-preview" ref={box}>
      {picture === "none" ? <span className="muted" data-testid={`no-preview-${id}`}>no picture</span> : null}
      {picture === null ? <span className="muted">{visible ? "loading…" : ""}</span> : null}
      {picture && picture !== "none" ? <img data-testid={`preview-${id}`} src={picture} alt={`${id} after reset`} /> : null}
    </div>
  );
}

// The Environments page's list: each entry's family, the families present, and the search by
// name (`?q=`: words matched in the id, Gymnasium id and description) and family (`?family=`).

export interface CatalogEntry {
  id: string;
  description?: string;
  gymnasium_id?: string | null;
  family?: string | null;
}

/** The family an entry is listed under ("Custom" when the catalog names none). */
export function familyOf(entry: CatalogEntry): string {
  return entry.family || "Custom";
}

/** The families of the entries, in the order they first appear. */
export function families(entries: readonly CatalogEntry[]): string[] {
  return [...new Set(entries.map(familyOf))];
}

/** The entries whose text holds every word of `query`, of `family` when given. */
export function filterEntries<E extends CatalogEntry>(entries: readonly E[], query: string, family: string | null): E[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return entries.filter((entry) => {
    if (family && familyOf(entry) !== family) return false;
    const text = [entry.id, entry.gymnasium_id ?? "", entry.description ?? ""].join(" ").toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

// Project and channel ids by name, remembered by this instance: every event asks for both, and a
// round trip to the database each time would be most of its cost. Only committed rows are
// remembered (what a batch found goes in once it commits), and everything is forgotten whenever
// the access version moves: deleting a project or a channel, on any instance, moves it. So are the
// users who have their id's row in the users search (users-search.ts): an event of a user known
// here writes none.
import type { Project } from "../../model/project.ts";

export type Found =
  | { project: Project }
  | { channel: { projectId: number; name: string; id: number } }
  | { user: { projectId: number; userId: string } };

/** Users remembered at most; past that the list starts again (a user not remembered costs one more lookup). */
const MAX_USERS = 100_000;

export class NameCache {
  private readonly projects = new Map<string, Project>();
  private readonly channels = new Map<string, number>();
  private readonly users = new Set<string>();
  private version = "";

  constructor(private readonly currentVersion: () => string) {}

  /** The cache for the current version: emptied when it moved. */
  private current(): this {
    const version = this.currentVersion();
    if (version !== this.version) {
      this.projects.clear();
      this.channels.clear();
      this.users.clear();
      this.version = version;
    }
    return this;
  }

  project(name: string): Project | undefined {
    return this.current().projects.get(name);
  }

  channel(projectId: number, name: string): number | undefined {
    return this.current().channels.get(`${projectId}\u0000${name}`);
  }

  /** Whether the user has their id's row in the users search. */
  user(projectId: number, userId: string): boolean {
    return this.current().users.has(`${projectId}\u0000${userId}`);
  }

  /** The version now, to hand back to remember(): what was read under another version is not kept. */
  get stamp(): string {
    return this.currentVersion();
  }

  /** Keeps what was read or written while the version was `stamp`, if it still is. */
  remember(found: Found[], stamp: string): void {
    if (this.current().version !== stamp) return;
    for (const f of found) {
      if ("project" in f) this.projects.set(f.project.name, f.project);
      else if ("channel" in f) this.channels.set(`${f.channel.projectId}\u0000${f.channel.name}`, f.channel.id);
      else {
        if (this.users.size >= MAX_USERS) this.users.clear();
        this.users.add(`${f.user.projectId}\u0000${f.user.userId}`);
      }
    }
  }
}

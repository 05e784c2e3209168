// The session's own profile (issue 19): its picture, set from an HTTPS URL or base64, or removed. Others read it
// as the contact's picture (GET …/contacts/{id}/picture), as does the session with its own number.
import type { Principal } from '../auth/scopes.js';
import { forCaller, type MediaSource } from '../messages/content.js';
import type { SessionManager } from '../sessions/manager.js';
import { loadPicture } from './picture.js';

export class ProfileService {
  constructor(private readonly deps: { sessions: SessionManager; mediaSource: MediaSource }) {}

  /** `caller`: whose share of the download pool a picture URL takes */
  async setPicture(session: string, input: { url?: string; base64?: string }, caller?: Principal): Promise<void> {
    const engine = await this.deps.sessions.connected(session);
    const picture = await loadPicture(input, forCaller(this.deps.mediaSource, caller));
    await engine.setProfilePicture(picture);
  }

  async removePicture(session: string): Promise<void> {
    await (await this.deps.sessions.connected(session)).setProfilePicture(null);
  }
}

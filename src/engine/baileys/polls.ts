// Poll votes: Baileys rc14 does not decrypt them, so the gateway does, with the poll's secret from its store (BAILEYS.md §11).
import { createHash, randomBytes } from 'node:crypto';
import { aesEncryptGCM, decryptPollVote, hmacSign, normalizeMessageContent, proto, type WAMessage, type WAMessageKey } from '@whiskeysockets/baileys';
import { fromRaw } from './content.js';
import { TtlCache } from './cache.js';
import type { SessionContext } from './context.js';
import { bare } from './identities.js';

/** What decrypting a vote needs of its poll. */
export interface PollSecret {
  secret: Buffer;
  options: string[];
  /** creator candidates (PN and LID) */
  creators: string[];
}

export interface DecryptedVote {
  pollMessageId: string;
  selectedOptions: string[];
}

export class PollVotes {
  /** polls received from others while running, with both creator ids (PN and LID); after a restart `find` reads the stored raw copy */
  private readonly received = new TtlCache(7 * 24 * 3600_000, 5_000);

  constructor(private readonly ctx: SessionContext) {}

  /** Remembers a poll that arrived, so later votes on it can be decrypted. */
  rememberPoll(msg: WAMessage): void {
    const poll = pollOf(msg.message);
    const secret = msg.message?.messageContextInfo?.messageSecret;
    if (!poll || !secret?.length || !msg.key.id) return;
    // participant is '' (not absent) in 1:1 chats
    const creator = msg.key.participant || msg.key.remoteJid;
    const creatorAlt = msg.key.participantAlt || msg.key.remoteJidAlt;
    this.received.set(msg.key.id, {
      secret: Buffer.from(secret),
      options: (poll.options ?? []).map((o) => o.optionName ?? ''),
      creators: [creator, creatorAlt].map((j) => bare(j)).filter((j): j is string => !!j),
    } satisfies PollSecret);
  }

  /** The vote inside an upserted pollUpdateMessage, decrypted; undefined when the poll or its secret is unknown. */
  async decrypt(msg: WAMessage): Promise<DecryptedVote | undefined> {
    const update = normalizeMessageContent(msg.message)?.pollUpdateMessage;
    const pollKey = update?.pollCreationMessageKey;
    if (!update?.vote || !pollKey?.id) return undefined;
    const poll = this.received.get<PollSecret>(pollKey.id) ?? (await this.find(pollKey.id, msg.key.remoteJid ?? undefined));
    if (!poll) return undefined;
    const voters = [msg.key.participantAlt || msg.key.remoteJidAlt, msg.key.participant || msg.key.remoteJid, ...(msg.key.fromMe ? [this.ctx.me().pn, this.ctx.me().lid] : [])]
      .map((j) => bare(j))
      .filter((j): j is string => !!j);
    // the creator and voter ids that went into the key are PN or LID; every pair is tried until the GCM tag checks
    for (const pollCreatorJid of unique(poll.creators)) {
      for (const voterJid of unique(voters)) {
        try {
          const vote = decryptPollVote(update.vote, { pollEncKey: poll.secret, pollMsgId: pollKey.id, pollCreatorJid, voterJid });
          return { pollMessageId: pollKey.id, selectedOptions: namesOf(vote.selectedOptions ?? [], poll.options) };
        } catch {
          // wrong pair: try the next
        }
      }
    }
    this.ctx.logger.warn({ poll: pollKey.id }, 'could not decrypt a poll vote with any creator/voter pair');
    return undefined;
  }

  /** a poll not received while running (sent by this session, or before a restart): from its stored raw copy */
  private async find(id: string, chatId: string | undefined): Promise<PollSecret | undefined> {
    const stored = (await this.ctx.lookupMessage(id, chatId)) ?? (await this.ctx.lookupMessage(id));
    const raw = stored ? fromRaw(stored.raw) : undefined;
    const poll = pollOf(raw?.message);
    const secret = raw?.message?.messageContextInfo?.messageSecret;
    if (!raw || !poll || !secret?.length) return undefined;
    const me = this.ctx.me();
    const creators = raw.key.fromMe ? [me.lid, me.pn] : [raw.key.participant || raw.key.remoteJid];
    return { secret: Buffer.from(secret), options: (poll.options ?? []).map((o) => o.optionName ?? ''), creators: creators.filter((j): j is string => !!j) };
  }
}

/**
 * The encrypted vote WhatsApp sends (pollUpdateMessage): Baileys' decryptPollVote run backwards. The key is
 * HMAC(HMAC(0³², secret), pollId ‖ creator ‖ voter ‖ "Poll Vote" ‖ 0x01), AES-256-GCM with a 12-byte IV and the AAD
 * `pollId\0voter`; the plaintext lists sha256 of each chosen option name.
 */
export function pollVoteMessage(input: { key: WAMessageKey; secret: Buffer; creator: string; voter: string; selectedOptions: string[]; timestampMs: number }): proto.IMessage {
  const pollId = input.key.id!;
  const sign = Buffer.concat([Buffer.from(pollId), Buffer.from(input.creator), Buffer.from(input.voter), Buffer.from('Poll Vote'), Buffer.from([1])]);
  const key = hmacSign(sign, hmacSign(input.secret, Buffer.alloc(32)));
  const iv = randomBytes(12);
  const plaintext = proto.Message.PollVoteMessage.encode({ selectedOptions: input.selectedOptions.map((name) => createHash('sha256').update(name).digest()) }).finish();
  const encPayload = aesEncryptGCM(plaintext, key, iv, Buffer.from(`${pollId}\u0000${input.voter}`));
  return {
    pollUpdateMessage: {
      pollCreationMessageKey: { remoteJid: input.key.remoteJid ?? null, id: pollId, fromMe: !!input.key.fromMe, ...(input.key.participant ? { participant: input.key.participant } : {}) },
      vote: { encPayload, encIv: iv },
      senderTimestampMs: input.timestampMs,
    },
  };
}

function pollOf(message: proto.IMessage | null | undefined): proto.Message.IPollCreationMessage | undefined {
  const content = normalizeMessageContent(message);
  return content?.pollCreationMessage ?? content?.pollCreationMessageV2 ?? content?.pollCreationMessageV3 ?? undefined;
}

/** Votes carry sha256(option name); map them back to the names. */
function namesOf(hashes: Uint8Array[], options: string[]): string[] {
  const byHash = new Map(options.map((name) => [createHash('sha256').update(name).digest('hex'), name]));
  return hashes.map((h) => byHash.get(Buffer.from(h).toString('hex'))).filter((n): n is string => n !== undefined);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

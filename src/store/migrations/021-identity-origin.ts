// When and from what a session learnt each phone-number ↔ LID pair (issue 30: the identity routes report them): set when
// a pair is learnt or changes, kept while it is only seen again; null for pairs stored before this version.
export default `
ALTER TABLE identities ADD COLUMN learnt_at INTEGER;
ALTER TABLE identities ADD COLUMN source TEXT;
`;

/** The same schema change on PostgreSQL: times in ms are BIGINT. */
export const postgres = `
ALTER TABLE identities ADD COLUMN learnt_at BIGINT;
ALTER TABLE identities ADD COLUMN source TEXT;
`;

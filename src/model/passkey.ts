// A passkey as kept: a WebAuthn credential of one person.

/** Its credential id and COSE public key in base64url; its signature counter; the transports the browser named. */
export type Passkey = {
  id: number;
  userId: number;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
};

-- API keys of the read API. A key is `sk_<id>_<secret>` (see src/api/plugins/api-keys.ts): `id` is public
-- (it names the key in the CLI and in logs); the key itself is never stored, only its SHA-256.
CREATE TABLE api_keys (
  id text COLLATE "C" PRIMARY KEY,
  -- lowercase hex SHA-256 of the whole key text
  key_hash text COLLATE "C" NOT NULL,
  label text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- refreshed at most once per key-cache period per API instance (best effort: replicas cannot write)
  last_used_at timestamptz,
  revoked_at timestamptz
);

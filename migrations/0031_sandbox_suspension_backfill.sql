-- Issue 37 (2): a sandbox suspension is the team's (teams.sandbox_suspended_at, migration 0027), so
-- that revoking a suspended key and minting another sheds nothing. Keys suspended before 0027 carried
-- the suspension alone: move it to their teams, revoked keys included (revoking was the way out).
UPDATE `teams`
SET `sandbox_suspended_at` = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE `sandbox_suspended_at` IS NULL
  AND `id` IN (
    SELECT `team_id` FROM `api_keys`
    WHERE json_extract(`mail`, '$.sandbox') = 1 AND json_extract(`mail`, '$.suspended') = 1
  );

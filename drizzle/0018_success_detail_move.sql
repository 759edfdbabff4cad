-- Custom SQL migration file, put your code below! --
-- The first successes' details move out of the trigger rows into success_detail (as JSON text), before
-- the next migration drops triggers.ok_detail.
INSERT INTO success_detail (trigger_id, detail)
SELECT id, ok_detail::text FROM triggers WHERE ok_detail IS NOT NULL
ON CONFLICT (trigger_id) DO NOTHING;

-- Curator decisions on entity-link disagreements (docs/review.md, `cinesub review decide-link`).
-- link_decisions is append-only; the latest decision per KIM page is in force (decision ids
-- start with the decision time, so equal timestamps still order by time). A decision written
-- into link_reviews before link_decisions existed counts when no later one exists.
CREATE OR REPLACE TEMP VIEW link_decision_in_force AS
SELECT kim_id, decision, decided_by, decided_at, note, decision_id FROM (
    SELECT d.kim_id, d.decision, d.decided_by, d.decided_at, d.note, d.decision_id,
           row_number() OVER (PARTITION BY d.kim_id ORDER BY d.decided_at DESC, d.decision_id DESC) AS rn
    FROM link_decisions d
) WHERE rn = 1
UNION ALL
SELECT lr.kim_id, lr.decision, lr.decided_by, lr.decided_at, NULL AS note, NULL AS decision_id
FROM link_reviews lr
WHERE lr.decision IS NOT NULL
  AND lr.kim_id NOT IN (SELECT kim_id FROM link_decisions);

-- Availability for the complete-coverage optimisation (SPEC A7), long form (film_id, attribute).
-- Languages: a film has a language when a clean (ok or retained) track was selected for it.
-- Countries: a film has a country when a rating maps into that country's label space; a film
-- whose only certificate entries are Unrated/Not Rated is dropped first (SPEC A7).
CREATE OR REPLACE TEMP VIEW coverage_languages AS
SELECT s.imdb_id AS film_id, s.language AS attribute
FROM selections s JOIN eligible_films e USING (imdb_id)
WHERE s.status IN ('ok', 'retained');

-- (a film whose only entries are Unrated/Not Rated has no mapped rating, so no attribute: it is
-- dropped by construction)
CREATE OR REPLACE TEMP VIEW coverage_countries AS
SELECT r.imdb_id AS film_id, r.country AS attribute
FROM ratings r JOIN eligible_films e USING (imdb_id);

"""The small labelled corpus that ``retrieval_hybrid`` ranks: passages, queries, relevance.

Written for the demo (not taken from a benchmark): 63 short passages on five
topics (espresso, bicycle repair, a made-up service's incident notes, house
plants, bread baking), and two sets of queries with the passages that answer
each one. Each passage has an id like ``bike-03``; the lists below are in a
fixed, interleaved order so that ties, broken by position, favour no topic.
Three passages repeat another's topic and wording with a different identifier
(``KX-7718`` beside ``KX-7781``), as real incident notes and part lists do.

*Keyword* queries carry the exact terms a passage uses: error codes, version
numbers, part names and rare words. *Paraphrase* queries ask the same kind of
question in other words, sharing few or no content words with the passages
that answer them; the words they do use appear elsewhere in the same topic,
alongside the passage's own words, which is what a co-occurrence model (the
demo's LSA stand-in for a dense embedder) can pick up and exact matching cannot.

Labels are binary: a passage listed for a query answers it; every other
passage does not.
"""

from typing import Final

PASSAGES: Final[dict[str, str]] = {
    "coffee-01": "Grind finer when an espresso shot runs fast and tastes sour: the water "
    "passes the puck too quickly and under-extracts the coffee.",
    "bike-01": "To fix a puncture, remove the inner tube, find the hole by listening for "
    "air or dunking the tube in water, then roughen the rubber and apply a patch.",
    "ops-01": "Error KX-7781 means the billing service could not reach the ledger "
    "database; the request is retried three times before the customer sees a failure.",
    "plant-01": "Yellow leaves on a pothos usually mean the soil stays wet too long; let "
    "the top few centimetres dry before you water again.",
    "bread-01": "A sourdough starter is ready to use when it doubles within six hours of a "
    "feeding and a spoonful floats in water.",
    "coffee-02": "A shot that runs slowly and tastes bitter and harsh is over-extracted: "
    "coarsen the grind or shorten the shot to pull fewer solubles.",
    "bike-02": "Tubeless tyres hold liquid sealant that plugs small holes as you ride; "
    "top up the sealant every few months because it dries out.",
    "ops-02": "Release 5.12.3 of the gateway fixed the memory leak in the connection "
    "pool that forced nightly restarts in release 5.12.1.",
    "plant-02": "Fungus gnats breed in damp potting mix; water less often, add a layer of "
    "sand on top, and use yellow sticky traps to catch the adults.",
    "bread-02": "Dough hydration is the weight of water divided by the weight of flour: "
    "500 g flour with 375 g water is a 75 percent hydration dough.",
    "coffee-03": "Descale the espresso machine every month in hard-water areas; limescale "
    "in the boiler and group head lowers the brew temperature.",
    "bike-03": "A squeaking chain needs cleaning and fresh lubricant: wipe it with a "
    "rag, degrease it, then put one drop of oil on every roller.",
    "ops-03": "When users cannot sign in and the logs show AUTH-403-TOKEN, the signing "
    "key has rotated and the identity provider cache must be flushed.",
    "plant-03": "A fiddle-leaf fig drops leaves when moved; it wants bright indirect "
    "light and a stable spot away from draughts and radiators.",
    "bread-03": "Oven spring is the final rise of a loaf in the first minutes of baking; "
    "steam keeps the crust soft so the loaf can expand.",
    "coffee-04": "Tamp the grounds level in the portafilter with firm, even pressure; an "
    "uneven puck lets water channel through the weak side.",
    "bike-04": "Indexing a rear derailleur: shift to the smallest cog, set cable tension "
    "with the barrel adjuster until shifts are crisp and quiet.",
    "ops-04": "The nightly export job QZ-PIPE-12 writes to the archive bucket; if the "
    "bucket quota is full the job stops and pages the on-call engineer.",
    "plant-04": "Root rot turns roots brown and mushy and the plant wilts even though the "
    "soil is wet; cut away the rotten roots and repot into fresh, fast-draining mix.",
    "bread-04": "Bulk fermentation is the first rise of the whole dough; it is finished "
    "when the dough has grown by about half and feels airy.",
    "coffee-05": "A burr grinder gives an even particle size, which a blade grinder "
    "cannot; even grounds extract evenly and taste cleaner.",
    "bike-05": "Brake pads are worn when the grooves disappear; replace rim brake pads "
    "before the metal shoe touches and scores the rim.",
    "ops-05": "Rate limits on the public API are 600 requests per minute per key; beyond "
    "that the API answers 429 and the client should back off.",
    "plant-05": "Repot a houseplant in spring when roots circle the pot or grow out of "
    "the drainage hole; choose a pot one size larger.",
    "bread-05": "The final proof happens after shaping; a loaf is ready when a floured "
    "finger leaves a dent that springs back slowly.",
    "coffee-06": "Crema is the layer of fine foam on an espresso, made by carbon dioxide "
    "from freshly roasted beans; stale beans give little crema.",
    "bike-06": "Tyre pressure for a road bicycle depends on rider weight and tyre "
    "width; wider tyres run lower pressure with the same grip.",
    "ops-06": "The status page went red when the primary load balancer failed its health "
    "check and traffic did not fail over to the standby in the second region.",
    "plant-06": "Brown crispy leaf tips on a calathea come from dry air and hard tap "
    "water; raise humidity and water with rain or filtered water.",
    "bread-06": "A levain is a portion of starter built up the night before and mixed "
    "into the dough; it carries the wild yeast and bacteria.",
    "coffee-07": "Store roasted beans airtight and away from light; ground coffee goes "
    "stale within days because the aroma escapes.",
    "bike-07": "A bike that clicks when pedalling often has a loose bottom bracket or dry "
    "pedal threads; grease the threads and tighten to the stated torque.",
    "ops-07": "A full disk on the log volume stopped the ledger database from writing "
    "and made every payment request time out until old logs were rotated.",
    "plant-07": "Succulents need a gritty mix and a sunny window; water deeply and then "
    "wait until the soil is completely dry.",
    "bread-07": "Score the loaf with a sharp blade just before baking so the crust opens "
    "where you choose instead of tearing at the side.",
    "coffee-08": "The espresso maker, or espresso machine, pushes hot water through "
    "compacted coffee at around nine bar; a home coffee machine does the same at lower "
    "cost.",
    "bike-08": "Your bike, or bicycle, needs a chain check every few thousand kilometres; "
    "a stretched chain wears the cassette and the chainrings.",
    "ops-08": "An outage is any time the service is unavailable to customers; the "
    "postmortem records the timeline, the cause and the fix for every outage.",
    "plant-08": "Too much water is the most common way to kill a houseplant: soggy soil "
    "starves roots of air, and overwatering leads to rot.",
    "bread-08": "Proofing means letting dough rise; a dough that rises too long collapses "
    "and bakes flat, while a short proof gives a dense, tight crumb.",
    "coffee-09": "Bitter coffee often means the water is too hot or the grounds too fine; "
    "an over-extracted cup pulls harsh compounds from the beans.",
    "bike-09": "A flat tyre on the road: a puncture from glass or a thorn, or a pinch "
    "flat from riding into a kerb with too little air.",
    "ops-09": "Login failures spiked because the authentication service rejected every "
    "token after the signing key changed; users could not sign in for twenty minutes.",
    "plant-09": "Yellowing leaves, called chlorosis, can come from too much water, too "
    "little light or a lack of nitrogen in old soil.",
    "bread-09": "A dense loaf with a tight crumb usually had too short a rise, a weak "
    "starter, or dough that was too dry.",
    "coffee-10": "Sour espresso is under-extracted: the grind is too coarse, the dose too "
    "small or the water too cool to dissolve enough of the coffee.",
    "bike-10": "Noisy gears that skip under load mean the cable has stretched; turn the "
    "barrel adjuster a quarter turn at a time until the chain runs quietly.",
    "ops-10": "A crash of the gateway at peak traffic left the service unavailable; the "
    "connection pool leaked memory until the process was killed.",
    "plant-10": "A plant that leans and stretches toward the window is short of light; "
    "turn the pot weekly or move it closer to the window.",
    "bread-10": "Flour with more protein builds stronger gluten, which traps gas and "
    "gives an open crumb and a taller loaf.",
    "coffee-11": "Milk for a latte is steamed to about sixty degrees; hotter milk tastes "
    "flat and loses its sweetness.",
    "bike-11": "Hydraulic disc brakes that feel spongy have air in the line and need a "
    "bleed with fresh fluid of the type printed on the lever.",
    "ops-11": "Throttling: a client that sends too many calls too fast is told to wait "
    "and retry later, with a delay that grows after each rejection.",
    "plant-11": "Spider mites leave fine webbing and speckled leaves; rinse the plant "
    "and wipe the leaves, and raise humidity because the mites like dry air.",
    "bread-11": "An autolyse rests flour and water for half an hour before salt and "
    "starter go in, so the gluten starts to form on its own.",
    "coffee-12": "A pressurised portafilter basket forgives an uneven grind but makes "
    "fake crema; an unpressurised basket needs a good grinder.",
    "bike-12": "Chain lube: wet lube lasts in rain but attracts grit, dry lube stays "
    "clean but washes off; wipe off the excess either way.",
    "ops-12": "Deploy 5.13.0 rolled back automatically when the error rate of the "
    "canary passed two percent during the first ten minutes.",
    "plant-12": "Fertilise houseplants in the growing season only; a diluted feed once a "
    "month is plenty, and none in winter.",
    "bread-12": "Salt tightens gluten and slows fermentation; two percent of the flour "
    "weight is the usual amount in bread.",
    # Near-miss identifiers: same topic and wording as ops-01, ops-03 and ops-04, one
    # code apart. Only the identifier tells them apart.
    "ops-13": "Error KX-7718 means the ledger database refused a duplicate payment id; "
    "the request is not retried and the customer is asked to check the payment.",
    "ops-14": "The weekly export job QZ-PIPE-21 copies the archive bucket to cold storage; "
    "it needs read access to the bucket and pages nobody when it fails.",
    "ops-15": "When the logs show AUTH-401-EXPIRED the session token has expired and the "
    "app asks the user to sign in again; no action is needed.",
}

KEYWORD_QUERIES: Final[dict[str, tuple[str, ...]]] = {
    "error KX-7781 ledger": ("ops-01",),
    "AUTH-403-TOKEN sign in": ("ops-03", "ops-09"),
    "release 5.12.3 memory leak connection pool": ("ops-02", "ops-10"),
    "QZ-PIPE-12 bucket quota": ("ops-04",),
    "tubeless sealant": ("bike-02",),
    "rear derailleur barrel adjuster": ("bike-04", "bike-10"),
    "portafilter tamp puck channel": ("coffee-04",),
    "descale limescale boiler": ("coffee-03",),
    "fungus gnats sticky traps": ("plant-02",),
    "calathea humidity": ("plant-06", "plant-11"),
    "levain starter": ("bread-06", "bread-01"),
    "autolyse gluten": ("bread-11",),
}
"""Queries that use the passages' exact terms, with the passages that answer them."""

PARAPHRASE_QUERIES: Final[dict[str, tuple[str, ...]]] = {
    "why does my coffee taste too bitter": ("coffee-02", "coffee-09"),
    "espresso tastes acidic and thin": ("coffee-01", "coffee-10"),
    "bike tyre lost all its air": ("bike-01", "bike-09"),
    "bicycle gears noisy and skipping": ("bike-10", "bike-04"),
    "service unavailable after a crash": ("ops-10", "ops-06"),
    "too many calls get rejected, how long to wait": ("ops-05", "ops-11"),
    "overwatering a houseplant": ("plant-01", "plant-04", "plant-08"),
    "houseplant leaves turning pale": ("plant-09", "plant-01"),
    "loaf did not rise and is heavy": ("bread-09", "bread-08"),
    "how long should dough proof": ("bread-05", "bread-08", "bread-04"),
    "users cannot log in": ("ops-09", "ops-03"),
    "chain squeaks, which oil": ("bike-03", "bike-12"),
}
"""Queries that ask in other words, with the passages that answer them."""

QUERY_SETS: Final[dict[str, dict[str, tuple[str, ...]]]] = {
    "keyword": KEYWORD_QUERIES,
    "paraphrase": PARAPHRASE_QUERIES,
    "all": {**KEYWORD_QUERIES, **PARAPHRASE_QUERIES},
}
"""The query sets the demo can score, by the name its ``queries`` parameter takes."""

import { DESKTOP, tourAt } from "./tour.ts";

/** The page tour at desktop width (test/web/tour.ts). */
tourAt(DESKTOP);

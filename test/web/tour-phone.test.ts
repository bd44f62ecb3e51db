import { PHONE, tourAt } from "./tour.ts";

/** The page tour at 390 px (test/web/tour.ts). */
tourAt(PHONE);

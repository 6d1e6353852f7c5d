"""Plan checking and estimates: what a plan will take and need, above the plan vocabulary
(``plan/``) and the schedule it reads the rounds from."""

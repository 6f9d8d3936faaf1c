"""Research tools: importing recorded games into the log, and the papers' metrics over logged games."""

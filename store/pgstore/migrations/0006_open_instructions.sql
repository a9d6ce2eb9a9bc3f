-- The open instructions of a workspace (pending or unknown: those the
-- agent may not have received), in insert order, from an index of those
-- only: the delivery of the next instruction and a transfer's briefing
-- read them on every turn, and a workspace may have been sent thousands.
CREATE INDEX instructions_open ON instructions (workspace, ord) WHERE state IN ('pending', 'unknown');

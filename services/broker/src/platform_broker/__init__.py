"""Session lifecycle: placement, idle timeout, reconciliation."""

"""Reviews: the prompt, the model call, and comments that land on diff lines."""

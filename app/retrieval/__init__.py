"""Finding the code a reviewer needs: vector, lexical and structural search, ranking, packing."""

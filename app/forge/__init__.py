"""The code host as the workflows see it: typed records (``models``) and the calls they
make (``protocol``). ``app/github/`` implements it; a second host plugs in here."""

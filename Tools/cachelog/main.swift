print("cachelog")

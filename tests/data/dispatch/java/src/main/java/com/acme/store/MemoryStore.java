package com.acme.store;

public class MemoryStore implements Store {
    public String get(String key) {
        return map.get(key);
    }
}

package com.acme.app;

import com.acme.store.Store;

public class Cache {
    private final Store store;

    public String load(String key) {
        return store.get(key);
    }
}

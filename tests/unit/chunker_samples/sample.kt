package com.example.notes

import java.time.Instant

/**
 * A note a user wrote.
 */
data class Note(
    val id: Long,
    val text: String,
    val createdAt: Instant,
)

class NoteRepository(private val store: MutableMap<Long, Note> = mutableMapOf()) {

    fun save(note: Note): Note {
        store[note.id] = note
        return note
    }

    fun search(query: String): List<Note> =
        store.values.filter { it.text.contains(query, ignoreCase = true) }

    companion object {
        fun inMemory(): NoteRepository = NoteRepository()
    }
}

fun Note.preview(length: Int = 40): String = text.take(length)
